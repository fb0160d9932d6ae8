# kedr dsmc over ranks with the grid split into boxes ([run] split = rcb, docs/dsmc.md "Several
# ranks"), on the cpu: over 2 ranks 30 steps then a restart to 60 is the straight run bit for bit
# (checkpoints); those rcb checkpoints restarted over 2 ranks as columns (--split x), those over
# 3 ranks (gathered, columns), and those over 4 (gathered, rcb again) go on; the columns and the
# boxes both print their split. A rank count that leaves a rank no cell of a small grid stops
# with a message naming the count and the grid, and a non-zero exit; boxes thinner than a fast
# molecule moves in a step run, with a warning naming the count, the grid and the box.
if(KEDR_HAVE_MPI)
  set(rcb_case ${CMAKE_SOURCE_DIR}/cases/dsmc/quick.ini)
  set(rcb_mpi "${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG}")
  set(rcb_run "$<TARGET_FILE:kedr_cli> dsmc ${rcb_case} --backend cpu --sample-start 40")
  add_test(NAME mpi_kedr_dsmc_rcb_restart COMMAND bash -c "rm -rf rcb_a rcb_b && \
           ${rcb_mpi} 2 --oversubscribe ${rcb_run} --steps 60 --out rcb_a | grep -q 'split rcb' && \
           ${rcb_mpi} 2 --oversubscribe ${rcb_run} --steps 30 --out rcb_b >/dev/null && \
           ${rcb_mpi} 2 --oversubscribe ${rcb_run} --steps 60 --out rcb_b --restart rcb_b/quick.chk >/dev/null && \
           cmp rcb_a/quick.rank0of2.chk rcb_b/quick.rank0of2.chk && \
           cmp rcb_a/quick.rank1of2.chk rcb_b/quick.rank1of2.chk && \
           ${rcb_mpi} 2 --oversubscribe ${rcb_run} --steps 70 --out rcb_b --restart rcb_b/quick.chk \
             --split x | grep -q 'split x' && \
           ${rcb_mpi} 3 --oversubscribe ${rcb_run} --steps 80 --out rcb_b --restart rcb_b/quick.chk \
             --split x | grep -q 'over 2 ranks onto 3' && test -s rcb_b/quick.rank2of3.chk && \
           ${rcb_mpi} 4 --oversubscribe ${rcb_run} --steps 90 --out rcb_b --restart rcb_b/quick.chk \
             | grep -q 'over 3 ranks onto 4' && test -s rcb_b/quick.rank3of4.chk && test -s rcb_b/quick.csv")
  # 3 ranks on a grid of 2 x 1 cells
  add_test(NAME mpi_kedr_dsmc_rcb_bad COMMAND bash -c "rm -rf rcb_bad && mkdir rcb_bad && \
           cp ${CMAKE_SOURCE_DIR}/cases/dsmc/species.ini rcb_bad/ && \
           sed -e 's/^nx = .*/nx = 2/' -e 's/^ny = .*/ny = 1/' \
             ${rcb_case} > rcb_bad/tiny.ini && \
           ! ${rcb_mpi} 3 --oversubscribe $<TARGET_FILE:kedr_cli> dsmc rcb_bad/tiny.ini --backend cpu \
             --steps 2 --out rcb_bad > rcb_bad/log 2>&1 && \
           grep -q '3 ranks but the grid has 2 cells (2 x 1 x 1)' rcb_bad/log && \
           sed -e 's/^nx = .*/nx = 8/' -e 's/^ny = .*/ny = 4/' -e 's/^dt = .*/dt = 2e-4/' \
             ${rcb_case} > rcb_bad/thin.ini && \
           ${rcb_mpi} 4 --oversubscribe $<TARGET_FILE:kedr_cli> dsmc rcb_bad/thin.ini --backend cpu \
             --steps 2 --out rcb_bad > rcb_bad/thin.log 2>&1 && \
           grep -q 'over 4 ranks the grid of 8 x 4 x 1 cells leaves rank 0 a box 2 cells thin along x' \
             rcb_bad/thin.log")
  set_tests_properties(mpi_kedr_dsmc_rcb_restart mpi_kedr_dsmc_rcb_bad PROPERTIES LABELS mpi
    PROCESSORS 2
    ENVIRONMENT "OMP_NUM_THREADS=1;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
endif()
