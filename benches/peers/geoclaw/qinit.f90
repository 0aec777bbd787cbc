! Custom GeoClaw qinit for the raised-cosine hump (replaces geoclaw/src/2d/shallow/qinit.f90).
!
!   eta(r) = H/2 (1 + cos(pi r / R))  for great-circle distance r < R, else 0,
!
! added to the ocean at rest (eta = sea_level) in wet cells; velocities zero.
! H, R, lon0, lat0 and nsub are read from hump.data (written by setrun.py).  Each cell gets
! the cos(lat)-area-weighted mean of eta over nsub x nsub sub-points (midpoint rule), so the
! hump's volume is kept at every AMR level.  Distances use geoclaw_module's earth_radius.
subroutine qinit(meqn,mbc,mx,my,xlower,ylower,dx,dy,q,maux,aux)

    use geoclaw_module, only: sea_level, earth_radius, DEG2RAD, pi

    implicit none

    integer, intent(in) :: meqn,mbc,mx,my,maux
    real(kind=8), intent(in) :: xlower,ylower,dx,dy
    real(kind=8), intent(inout) :: q(meqn,1-mbc:mx+mbc,1-mbc:my+mbc)
    real(kind=8), intent(inout) :: aux(maux,1-mbc:mx+mbc,1-mbc:my+mbc)

    logical, save :: loaded = .false.
    real(kind=8), save :: hh, rr, lon0, lat0
    integer, save :: nsub

    integer :: i,j,ii,jj
    real(kind=8) :: x,y,xs,ys,w,sw,se,r,eta,s

    if (.not. loaded) then
        open(unit=57, file='hump.data', status='old', form='formatted')
        read(57,*) hh
        read(57,*) rr
        read(57,*) lon0
        read(57,*) lat0
        read(57,*) nsub
        close(57)
        loaded = .true.
        write(6,'(a,f8.2,a,f10.3,a,2f10.4,a,i3)') ' hump: H =',hh,' m, R =',rr/1d3, &
            ' km, at lon/lat',lon0,lat0,', nsub =',nsub
    endif

    q = 0.d0

    do j=1,my
        y = ylower + (j-0.5d0)*dy
        do i=1,mx
            x = xlower + (i-0.5d0)*dx
            q(1,i,j) = max(0.d0, sea_level - aux(1,i,j))
            if (aux(1,i,j) >= sea_level) cycle          ! land stays dry
            sw = 0.d0
            se = 0.d0
            do jj=1,nsub
                ys = y - 0.5d0*dy + (jj-0.5d0)*dy/nsub
                w = cos(ys*DEG2RAD)
                do ii=1,nsub
                    xs = x - 0.5d0*dx + (ii-0.5d0)*dx/nsub
                    ! great-circle distance (haversine)
                    s = sin(0.5d0*(ys-lat0)*DEG2RAD)**2 + cos(ys*DEG2RAD)*cos(lat0*DEG2RAD) &
                        * sin(0.5d0*(xs-lon0)*DEG2RAD)**2
                    r = 2.d0*earth_radius*asin(min(1.d0, sqrt(s)))
                    if (r < rr) then
                        eta = 0.5d0*hh*(1.d0 + cos(pi*r/rr))
                    else
                        eta = 0.d0
                    endif
                    se = se + w*eta
                    sw = sw + w
                enddo
            enddo
            q(1,i,j) = max(0.d0, sea_level + se/sw - aux(1,i,j))
        enddo
    enddo

end subroutine qinit
