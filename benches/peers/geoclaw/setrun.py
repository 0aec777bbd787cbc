"""
GeoClaw setup for the asteroid-tsunami reference (see README.md).

Writes the .data files for one run profile, chosen by the environment variable
GEOCLAW_RUN (default 'coarse'); see PROFILES below.  Also writes hump.data (read by
qinit.f90) and flagmap.data (read by flag2refine2.f90).

Physics: nonlinear shallow water on the sphere (coordinate_system 2, sphere_source 2 =
all metric source terms), Coriolis on (GeoClaw's omega = 2 pi / 86164.2 s), no friction,
sea level 0, dry tolerance 1e-3 m.  g and the Earth radius are the wafer-emu values
(9.80616 m/s^2, 6371.22 km) so distances and speeds match the emulator.
"""
import os
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# The hump
H = 200.0                                   # m
R0 = np.sqrt(30000e6 / np.pi)               # m (97.72 km)
LON0, LAT0 = -140.0, 35.0
GRAVITY = 9.80616
EARTH_RADIUS = 6.37122e6

# Domain: lon -260..-70 (100E..290E), lat -65..65 (same box as make_topo.py)
XLOWER, XUPPER, YLOWER, YUPPER = -260.0, -70.0, -65.0, 65.0

GAUGES = [
    # (number, name, lat, lon)
    (1, 'deep water off California', 33.0, -127.0),
    (2, 'off San Francisco Bay', 37.5, -124.0),
    (3, 'off Honolulu', 20.0, -158.5),
    (4, 'equator below the impact', 0.0, -140.0),
    (5, 'off Japan', 34.0, 144.0 - 360.0),
    # extra deep-water points due south of the impact, 720 and 1200 km away (the
    # distances of the emulator's flat-ocean exact-series test; 3892 km is gauge 4)
    (11, '720 km south of the impact', 35.0 - np.degrees(720e3 / EARTH_RADIUS), -140.0),
    (12, '1200 km south of the impact', 35.0 - np.degrees(1200e3 / EARTH_RADIUS), -140.0),
]

# Run profiles.
#   dx1      : level-1 cell size in degrees
#   ratios   : refinement ratios between levels (x = y; time ratios chosen by GeoClaw)
#   ttmap    : travel-time map that steers refinement (make_ttmap.py output of an earlier
#              run), or 'none'
#   levels   : per level L: (lead_s, window_s, tol_m[, halfwidth_m]) for flagging cells of
#              level L to make level L+1 (see flag2refine2.f90; tol only used when ttmap
#              is 'none'; halfwidth_m > 0 limits level L+1 to corridors of that half-width
#              around the great-circle arcs from the impact to gauges 1-5)
#   fgmax_dx : spacing (deg) of the fgmax grid whose 1 mm arrival times make this run's
#              own ttmap.txt (for the next, finer run)
#   tfinal   : seconds
#   nout     : number of output frames after t = 0 (binary fort.q/fort.b files)
#   topo     : topo file (made by make_topo.py)
HOUR = 3600.0
PROFILES = {
    # one level, 0.5 degree (~55 km): smoke test, timing, first travel-time map
    'uniform05': dict(dx1=0.5, ratios=[], ttmap='none', levels=[],
                      fgmax_dx=0.5, tfinal=14 * HOUR, nout=7, topo='pacific_6min.tt3'),
    # 0.5 degree + level 2 at 0.1 degree (6 arcmin) in a band from 20 min ahead of the
    # 0.5-degree run's 1 mm front to 3 h behind it
    'coarse': dict(dx1=0.5, ratios=[5], ttmap='_output_uniform05/ttmap.txt',
                   levels=[(20 * 60.0, 3 * HOUR, 0.0)],
                   fgmax_dx=0.2, tfinal=14 * HOUR, nout=7, topo='pacific_6min.tt3'),
    # 0.5 degree; level 2 at 0.1 degree from 15 min ahead of the 'coarse' run's 1 mm front
    # to 1.5 h behind it, everywhere; level 3 at 2 arcmin (1/30 degree) from 10 min ahead
    # to 40 min behind, only in 350 km half-width corridors along the great circles from
    # the impact to gauges 1-5; 9 h, enough for the Japan gauge (arrival ~8 h)
    'fine': dict(dx1=0.5, ratios=[5, 3], ttmap='_output_coarse/ttmap.txt',
                 levels=[(15 * 60.0, 1.5 * HOUR, 0.0), (10 * 60.0, 40 * 60.0, 0.0, 350e3)],
                 fgmax_dx=0.2, tfinal=9 * HOUR, nout=3, topo='pacific_6min.tt3'),
    # near field only: level 3 at 2 arcmin everywhere in the band (no corridors), 2 h
    # (the 720 and 1200 km points, California and San Francisco)
    'near2min': dict(dx1=0.5, ratios=[5, 3], ttmap='_output_coarse/ttmap.txt',
                     levels=[(15 * 60.0, 1.5 * HOUR, 0.0), (10 * 60.0, 40 * 60.0, 0.0)],
                     fgmax_dx=0.2, tfinal=2 * HOUR, nout=2, topo='pacific_6min.tt3'),
    # flat-ocean checks (run with GEOCLAW_FLAT=4000): plain wave-tolerance flagging
    # (|eta| > 1 mm) on every level, 1.6 h (the 720 and 1200 km points)
    'flat01': dict(dx1=0.5, ratios=[5], ttmap='none', levels=[(0.0, 0.0, 1e-3)],
                   fgmax_dx=0.5, tfinal=1.6 * HOUR, nout=2, topo='pacific_6min.tt3'),
    'flat2min': dict(dx1=0.5, ratios=[5, 3], ttmap='none',
                     levels=[(0.0, 0.0, 1e-3), (0.0, 0.0, 1e-3)],
                     fgmax_dx=0.5, tfinal=1.6 * HOUR, nout=2, topo='pacific_6min.tt3'),
}
def profile():
    name = os.environ.get('GEOCLAW_RUN', 'coarse')
    if name not in PROFILES:
        raise SystemExit('GEOCLAW_RUN=%s: not one of %s' % (name, ', '.join(PROFILES)))
    p = dict(PROFILES[name])
    if os.environ.get('GEOCLAW_FLAT'):
        p['topo'] = 'flat_%d.tt3' % round(float(os.environ['GEOCLAW_FLAT']))
    if os.environ.get('GEOCLAW_TFINAL'):
        p['tfinal'] = float(os.environ['GEOCLAW_TFINAL'])
    p['name'] = name
    return p


def setrun(claw_pkg='geoclaw'):
    from clawpack.clawutil import data

    assert claw_pkg.lower() == 'geoclaw', "Expected claw_pkg = 'geoclaw'"
    p = profile()
    rundata = data.ClawRunData(claw_pkg, 2)

    # ---------------- GeoClaw parameters
    geo = rundata.geo_data
    geo.gravity = GRAVITY
    geo.coordinate_system = 2
    geo.earth_radius = EARTH_RADIUS
    geo.sphere_source = 2
    geo.coriolis_forcing = True
    geo.sea_level = 0.0
    geo.dry_tolerance = 1.e-3
    geo.friction_forcing = False
    geo.manning_coefficient = 0.0
    geo.friction_depth = 1e6
    geo.speed_limit = 50.0

    rundata.refinement_data.variable_dt_refinement_ratios = True
    rundata.refinement_data.wave_tolerance = 1e99   # unused: flag2refine2.f90 decides

    rundata.topo_data.topofiles = [[3, os.path.join(HERE, p['topo'])]]
    rundata.dtopo_data.dtopofiles = []
    rundata.qinit_data.qinit_type = 0     # the hump comes from qinit.f90

    # ---------------- Clawpack parameters
    c = rundata.clawdata
    c.num_dim = 2
    c.lower[0], c.upper[0] = XLOWER, XUPPER
    c.lower[1], c.upper[1] = YLOWER, YUPPER
    c.num_cells[0] = int(round((XUPPER - XLOWER) / p['dx1']))
    c.num_cells[1] = int(round((YUPPER - YLOWER) / p['dx1']))
    c.num_eqn = 3
    c.num_aux = 3
    c.capa_index = 2
    c.t0 = 0.0
    c.restart = False
    c.output_style = 1
    c.num_output_times = p['nout']
    c.tfinal = p['tfinal']
    c.output_t0 = True
    c.output_format = 'binary'
    c.output_q_components = 'all'
    c.output_aux_components = 'none'
    c.output_aux_onlyonce = True
    c.verbosity = 0
    c.dt_variable = True
    c.dt_initial = 5.0
    c.dt_max = 1e99
    c.cfl_desired = float(os.environ.get('GEOCLAW_CFL', 0.75))
    c.cfl_max = max(1.0, c.cfl_desired + 0.05)
    c.steps_max = 1000000
    c.order = 2
    c.dimensional_split = 'unsplit'
    c.transverse_waves = 2
    c.num_waves = 3
    c.limiter = ['mc', 'mc', 'mc']
    c.use_fwaves = True
    c.source_split = 'godunov'
    c.num_ghost = 2
    c.bc_lower[0] = c.bc_upper[0] = 'extrap'
    c.bc_lower[1] = c.bc_upper[1] = 'extrap'
    c.checkpt_style = 0

    # ---------------- AMR
    a = rundata.amrdata
    a.max1d = 60
    a.amr_levels_max = 1 + len(p['ratios'])
    ratios = p['ratios'] or [1]
    a.refinement_ratios_x = list(ratios)
    a.refinement_ratios_y = list(ratios)
    a.refinement_ratios_t = list(ratios)    # ignored: variable_dt_refinement_ratios
    a.aux_type = ['center', 'capacity', 'yleft']
    a.flag_richardson = False
    a.flag2refine = True
    a.regrid_interval = 3
    a.regrid_buffer_width = 2
    a.clustering_cutoff = 0.7
    a.verbosity_regrid = 0

    rundata.regiondata.regions = []
    rundata.flagregiondata.flagregions = []

    # ---------------- Gauges (record every step of the finest level covering them)
    rundata.gaugedata.gauges = [[n, lon, lat, 0.0, 1e10] for n, _, lat, lon in GAUGES]

    # ---------------- fgmax grid: 1 mm arrival times on a uniform grid (for ttmap.txt)
    from clawpack.geoclaw import fgmax_tools
    fg = fgmax_tools.FGmaxGrid()
    fg.point_style = 2
    d = p['fgmax_dx']
    fg.x1, fg.x2 = XLOWER + d / 2, XUPPER - d / 2
    fg.y1, fg.y2 = YLOWER + d / 2, YUPPER - d / 2
    fg.dx = fg.dy = d
    fg.tstart_max = 0.0
    fg.tend_max = 1e10
    fg.dt_check = 20.0
    fg.min_level_check = 1
    fg.arrival_tol = 1e-3
    fg.interp_method = 0
    rundata.fgmax_data.num_fgmax_val = 1
    rundata.fgmax_data.fgmax_grids = [fg]

    # ---------------- files for the custom Fortran
    with open('hump.data', 'w') as f:
        f.write('%.10g   H (m)\n%.10g   R (m)\n%.10g   lon0\n%.10g   lat0\n%d   nsub\n'
                % (H, R0, LON0, LAT0, 8))
    ttmap = p['ttmap'] if p['ttmap'] == 'none' else os.path.join(HERE, p['ttmap'])
    if ttmap != 'none' and not os.path.exists(ttmap):
        raise SystemExit('%s missing: run the profile that makes it first' % ttmap)
    with open('flagmap.data', 'w') as f:
        f.write("'%s'   travel-time map\n" % ttmap)
        f.write('%d   levels\n' % len(p['levels']))
        for lev in p['levels']:
            lead, window, tol = lev[:3]
            halfwidth = lev[3] if len(lev) > 3 else 0.0
            f.write('%.10g %.10g %.10g %.10g   lead (s), window (s), tol (m), halfwidth (m)\n'
                    % (lead, window, tol, halfwidth))
        corridors = [(LON0, LAT0, lon, lat) for n, _, lat, lon in GAUGES if n <= 5]
        f.write('%d   corridors: lon lat (impact) -> lon lat (gauge)\n' % len(corridors))
        for c in corridors:
            f.write('%.6f %.6f %.6f %.6f\n' % c)
    with open('profile.txt', 'w') as f:
        f.write('%s\n' % p)
    return rundata


if __name__ == '__main__':
    import sys
    rundata = setrun(*sys.argv[1:])
    rundata.write()
