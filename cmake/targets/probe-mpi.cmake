# kedr probe mpi-transpose under mpirun on the cpu (docs/gpu-characterization.md, section 11):
# every rank checks its strip; rank 0 alone writes the JSON (two ranks renaming one temporary
# file raced, and one of them failed, on a host of several GPUs). The library's side is
# tests/mpi/test_probe_dist.c.
if(KEDR_HAVE_MPI)
  add_test(NAME mpi_kedr_probe_transpose_np3 COMMAND bash -c "rm -f mpi_probe_t.json && \
           ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 3 --oversubscribe \
             $<TARGET_FILE:kedr_cli> probe mpi-transpose --backend cpu --n 96 --repeats 3 \
             --json mpi_probe_t.json > mpi_probe_t.log && \
           grep -q 'over 3 ranks' mpi_probe_t.log && grep -q 'host-staged MPI' mpi_probe_t.log && \
           grep -q '\"suite\": \"probe-mpi-transpose\"' mpi_probe_t.json && \
           test ! -e mpi_probe_t.json.tmp")
  set_tests_properties(mpi_kedr_probe_transpose_np3 PROPERTIES LABELS mpi PROCESSORS 2 TIMEOUT 120
    ENVIRONMENT "OMP_NUM_THREADS=1;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
endif()
