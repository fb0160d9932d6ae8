# kedr adi over several ranks (docs/adi.md, "Several GPUs and nodes"): the command under mpirun
# on the cpu, against one rank, restarted from its per-rank checkpoints, and refused on more
# ranks than the grid's x planes allow. The library's side is tests/mpi/test_adi_ranks.c.
if(KEDR_HAVE_MPI)
  # The largest difference of the numbers of two VTK text files of the same grid (the header
  # lines must match); exits non-zero above tol.
  file(WRITE ${CMAKE_BINARY_DIR}/adi_vti_compare.awk [=[
NR == FNR { a[FNR] = $0; n = FNR; next }
{
    if (FNR > n) { bad = 1; exit }
    na = split(a[FNR], x, " "); nb = split($0, y, " ")
    if (na != nb) { bad = 1; exit }
    for (i = 1; i <= nb; i++) {
        if (x[i] == y[i]) continue
        if (x[i] !~ /^-?[0-9.]+(e[-+][0-9]+)?$/ || y[i] !~ /^-?[0-9.]+(e[-+][0-9]+)?$/) { bad = 1; exit }
        d = x[i] - y[i]; if (d < 0) d = -d
        if (d > max) max = d
    }
}
END { printf "max difference %g\n", max; if (FNR != n) bad = 1; exit (bad || max > tol) }
]=])
  set(adi_case ${CMAKE_SOURCE_DIR}/cases/adi/quick.ini)
  set(adi_mpirun "${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG}")
  set(adi_kedr "$<TARGET_FILE:kedr_cli> adi ${adi_case} --backend cpu")
  # 2 and 3 ranks against one: every output written, one checkpoint a rank, the fields of the
  # VTK file the same to rounding (the partitioned X sweep adds in another order: 1e-13 here).
  add_test(NAME mpi_kedr_adi_np2 COMMAND bash -c "rm -rf mpi_adi1 mpi_adi2 mpi_adi3 && \
           ${adi_kedr} --out mpi_adi1 && \
           ${adi_mpirun} 2 --oversubscribe ${adi_kedr} --out mpi_adi2 > mpi_adi2.log && \
           grep -q 'x 2 ranks' mpi_adi2.log && test -s mpi_adi2/quick.csv && \
           test -s mpi_adi2/quick.rank0of2.chk && test -s mpi_adi2/quick.rank1of2.chk && \
           test ! -e mpi_adi2/quick.chk && \
           awk -v tol=1e-10 -f ${CMAKE_BINARY_DIR}/adi_vti_compare.awk mpi_adi1/quick.vti mpi_adi2/quick.vti && \
           ${adi_mpirun} 3 --oversubscribe ${adi_kedr} --out mpi_adi3 > /dev/null && \
           awk -v tol=1e-10 -f ${CMAKE_BINARY_DIR}/adi_vti_compare.awk mpi_adi1/quick.vti mpi_adi3/quick.vti")
  # 10 steps, then a restart to 20 from the ranks' checkpoints: the straight run bit for bit.
  set(adi_run2 "${adi_mpirun} 2 --oversubscribe ${adi_kedr}")
  add_test(NAME mpi_kedr_adi_restart_np2 COMMAND bash -c "rm -rf mpi_adi_ra mpi_adi_rb && \
           ${adi_run2} --out mpi_adi_ra > /dev/null && ${adi_run2} --steps 10 --out mpi_adi_rb > /dev/null && \
           ${adi_run2} --out mpi_adi_rb --restart mpi_adi_rb/quick.chk > mpi_adi_rb.log && \
           grep -q 'restart from' mpi_adi_rb.log && \
           cmp mpi_adi_ra/quick.rank0of2.chk mpi_adi_rb/quick.rank0of2.chk && \
           cmp mpi_adi_ra/quick.rank1of2.chk mpi_adi_rb/quick.rank1of2.chk && \
           cmp mpi_adi_ra/quick.vti mpi_adi_rb/quick.vti")
  # 10 steps on 2 ranks, then the rest on 3 ranks and on 1 from their checkpoints (each rank
  # reads the files that hold its planes): the straight 2-rank run's fields to rounding (the
  # partitioned X sweep adds in another order on another rank count).
  add_test(NAME mpi_kedr_adi_restart_other COMMAND bash -c "rm -rf mpi_adi_oa mpi_adi_ob mpi_adi_o3 mpi_adi_o1 && \
           ${adi_run2} --out mpi_adi_oa > /dev/null && ${adi_run2} --steps 10 --out mpi_adi_ob > /dev/null && \
           ${adi_mpirun} 3 --oversubscribe ${adi_kedr} --out mpi_adi_o3 --restart mpi_adi_ob/quick.chk > mpi_adi_o3.log && \
           grep -q 'a run over 2 ranks, read by 3' mpi_adi_o3.log && test -s mpi_adi_o3/quick.rank2of3.chk && \
           awk -v tol=1e-10 -f ${CMAKE_BINARY_DIR}/adi_vti_compare.awk mpi_adi_oa/quick.vti mpi_adi_o3/quick.vti && \
           ${adi_kedr} --out mpi_adi_o1 --restart mpi_adi_ob/quick.rank1of2.chk > mpi_adi_o1.log && \
           grep -q 'a run over 2 ranks, read by 1' mpi_adi_o1.log && \
           awk -v tol=1e-10 -f ${CMAKE_BINARY_DIR}/adi_vti_compare.awk mpi_adi_oa/quick.vti mpi_adi_o1/quick.vti")
  # 3 ranks for 5 planes: refused, saying that 2 is the most; a grid whose part does not fit a
  # rank: refused before anything is allocated, with the memory a rank needs; --check shows the
  # split.
  add_test(NAME mpi_kedr_adi_too_many COMMAND bash -c "sed 's/^nx = .*/nx = 5/' ${adi_case} > mpi_adi_nx5.ini && \
           ! ${adi_mpirun} 3 --oversubscribe $<TARGET_FILE:kedr_cli> adi mpi_adi_nx5.ini --backend cpu \
             --out mpi_adi_many 2> mpi_adi_many.err && \
           grep -q 'at most 2 ranks' mpi_adi_many.err && \
           sed 's/^ny = .*/ny = 60000/; s/^nz = .*/nz = 60000/' ${adi_case} > mpi_adi_huge.ini && \
           ! ${adi_mpirun} 2 --oversubscribe $<TARGET_FILE:kedr_cli> adi mpi_adi_huge.ini --backend cpu \
             --out mpi_adi_huge 2> mpi_adi_huge.err && \
           grep -q 'grid too large.* a rank, 2 ranks' mpi_adi_huge.err && \
           ${adi_mpirun} 2 --oversubscribe ${adi_kedr} --check > mpi_adi_check.log && \
           grep -q 'split along x: 12 to 12 planes a rank (at most 12 ranks' mpi_adi_check.log")
  set_tests_properties(mpi_kedr_adi_np2 mpi_kedr_adi_restart_np2 mpi_kedr_adi_restart_other mpi_kedr_adi_too_many
    PROPERTIES LABELS mpi PROCESSORS 2
    ENVIRONMENT "OMP_NUM_THREADS=1;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
endif()
