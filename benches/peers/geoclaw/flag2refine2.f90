! Custom GeoClaw flag2refine2 (replaces geoclaw/src/2d/shallow/flag2refine2.f90).
!
! Refinement follows the tsunami front using a travel-time map T(lon,lat) (first time
! eta > 1 mm) from a previous, coarser run of the same problem (make_ttmap.py).
! A wet cell on level L is flagged for refinement to level L+1 when
!     T - lead(L) <= t <= T + window(L)
! where T is the smallest map value among the 3 x 3 map nodes nearest the cell centre
! (nodes the wave never reached are ignored; no value => never flagged).  So level L+1
! covers a band that starts lead(L) seconds ahead of the front and is dropped window(L)
! seconds after the front has passed.  Levels >= nlev+1 are never flagged.
! If halfwidth(L) > 0, level L is flagged only inside corridors: cells within halfwidth(L)
! metres (great-circle) of one of the ncorr arcs listed in flagmap.data (source -> gauge),
! or within halfwidth(L) of either end point.
! If the map file name is 'none', the plain GeoClaw test |eta - sea_level| > tol(L) is
! used instead (everywhere, at all times).
! Parameters: flagmap.data (written by setrun.py).
subroutine flag2refine2(mx,my,mbc,mbuff,meqn,maux,xlower,ylower,dx,dy,t,level, &
                       tolsp,q,aux,amrflags)

    use amr_module, only: DOFLAG, UNSET
    use geoclaw_module, only: dry_tolerance, sea_level, earth_radius, DEG2RAD

    implicit none

    integer, intent(in) :: mx,my,mbc,meqn,maux,level,mbuff
    real(kind=8), intent(in) :: xlower,ylower,dx,dy,t,tolsp
    real(kind=8), intent(in) :: q(meqn,1-mbc:mx+mbc,1-mbc:my+mbc)
    real(kind=8), intent(inout) :: aux(maux,1-mbc:mx+mbc,1-mbc:my+mbc)
    real(kind=8), intent(in out) :: amrflags(1-mbuff:mx+mbuff,1-mbuff:my+mbuff)

    integer, parameter :: maxlev = 10
    logical, save :: loaded = .false., usemap
    real(kind=8), save :: lead(maxlev), window(maxlev), tol(maxlev), halfw(maxlev)
    integer, save :: ncorr
    real(kind=8), allocatable, save :: ca(:,:), cb(:,:), cn(:,:)
    real(kind=8), save :: mxlow, mylow, mdx, mdy
    integer, save :: nlev, mnx, mny
    real(kind=8), allocatable, save :: tt(:,:)
    character(len=256) :: fname

    integer :: i,j,l,im,jm,ii,jj,k
    real(kind=8) :: x_c,y_c,eta,tarr,p(3),sinhw,lon1,lat1,lon2,lat2
    logical :: inside

    if (.not. loaded) then
        open(unit=58, file='flagmap.data', status='old', form='formatted')
        read(58,*) fname
        read(58,*) nlev
        lead = 0.d0
        window = -1.d99
        tol = 1.d99
        halfw = 0.d0
        do l=1,nlev
            read(58,*) lead(l), window(l), tol(l), halfw(l)
        enddo
        read(58,*) ncorr
        allocate(ca(3,max(ncorr,1)), cb(3,max(ncorr,1)), cn(3,max(ncorr,1)))
        do k=1,ncorr
            read(58,*) lon1, lat1, lon2, lat2
            ca(:,k) = unitvec(lon1, lat1)
            cb(:,k) = unitvec(lon2, lat2)
            cn(:,k) = cross(ca(:,k), cb(:,k))
            cn(:,k) = cn(:,k) / sqrt(sum(cn(:,k)**2))
        enddo
        close(58)
        usemap = (trim(fname) /= 'none')
        if (usemap) then
            open(unit=58, file=trim(fname), status='old', form='formatted')
            read(58,*) mnx, mny
            read(58,*) mxlow, mylow, mdx, mdy
            allocate(tt(mnx,mny))
            do jj=1,mny
                read(58,*) (tt(ii,jj), ii=1,mnx)
            enddo
            close(58)
        endif
        loaded = .true.
        write(6,*) 'flagmap: ', trim(fname), ' usemap =', usemap
        do l=1,nlev
            write(6,*) 'flagmap: level', l, ' lead, window, tol, halfwidth =', &
                lead(l), window(l), tol(l), halfw(l)
        enddo
        write(6,*) 'flagmap: corridors', ncorr
    endif

    l = level
    if (l > nlev) return

    do j=1,my
        y_c = ylower + (j - 0.5d0) * dy
        do i = 1,mx
            if (amrflags(i,j) .ne. UNSET) cycle
            if (q(1,i,j) <= dry_tolerance) cycle
            x_c = xlower + (i - 0.5d0) * dx
            if (halfw(l) > 0.d0) then
                ! corridor test (angles on the unit sphere)
                sinhw = sin(halfw(l) / earth_radius)
                p = unitvec(x_c, y_c)
                inside = .false.
                do k=1,ncorr
                    if (sum((p - ca(:,k))**2) < (2.d0*sinhw)**2 .or. &
                        sum((p - cb(:,k))**2) < (2.d0*sinhw)**2) then
                        inside = .true.           ! near an end point (chord test)
                    else if (abs(dot_product(p, cn(:,k))) < sinhw .and. &
                             dot_product(cross(ca(:,k), p), cn(:,k)) >= 0.d0 .and. &
                             dot_product(cross(p, cb(:,k)), cn(:,k)) >= 0.d0) then
                        inside = .true.           ! beside the arc, between its ends
                    endif
                    if (inside) exit
                enddo
                if (.not. inside) cycle
            endif
            if (usemap) then
                im = nint((x_c - mxlow) / mdx) + 1
                jm = nint((y_c - mylow) / mdy) + 1
                tarr = 1.d99
                do jj=max(1,jm-1),min(mny,jm+1)
                    do ii=max(1,im-1),min(mnx,im+1)
                        if (tt(ii,jj) >= 0.d0) tarr = min(tarr, tt(ii,jj))
                    enddo
                enddo
                if (tarr < 1.d98 .and. t >= tarr - lead(l) .and. t <= tarr + window(l)) then
                    amrflags(i,j) = DOFLAG
                endif
            else
                eta = q(1,i,j) + aux(1,i,j)
                if (abs(eta - sea_level) > tol(l)) amrflags(i,j) = DOFLAG
            endif
        enddo
    enddo
contains

    function unitvec(lon, lat) result(v)
        real(kind=8), intent(in) :: lon, lat
        real(kind=8) :: v(3)
        v = (/ cos(lat*DEG2RAD)*cos(lon*DEG2RAD), cos(lat*DEG2RAD)*sin(lon*DEG2RAD), &
               sin(lat*DEG2RAD) /)
    end function unitvec

    function cross(a, b) result(c)
        real(kind=8), intent(in) :: a(3), b(3)
        real(kind=8) :: c(3)
        c = (/ a(2)*b(3) - a(3)*b(2), a(3)*b(1) - a(1)*b(3), a(1)*b(2) - a(2)*b(1) /)
    end function cross

end subroutine flag2refine2
