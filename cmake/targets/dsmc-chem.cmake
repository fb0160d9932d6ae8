# kedr dsmc with chemistry (docs/dsmc.md, "Chemistry"): the reacting air heat bath
# (cases/dsmc/air5-bath.ini) on the cpu, 60 steps straight and 30 then a restart to 60, bit for
# bit (checkpoints written between the collisions that made new molecules and the next
# indexing), with reactions counted in the stats file; over 2 ranks the same, and the 2 ranks'
# checkpoints gathered onto 1.
set(chem_case ${CMAKE_SOURCE_DIR}/cases/dsmc/air5-bath.ini)
set(chem_one "$<TARGET_FILE:kedr_cli> dsmc ${chem_case} --backend cpu")
add_test(NAME cli_kedr_dsmc_chem_restart COMMAND bash -c "rm -rf chem_ra chem_rb && \
         ${chem_one} --steps 60 --out chem_ra > chem_ra.log && grep -q 'reactions/step' chem_ra.log && \
         ${chem_one} --steps 30 --out chem_rb >/dev/null && \
         ${chem_one} --steps 60 --out chem_rb --restart chem_rb/air5-bath.chk >/dev/null && \
         cmp chem_ra/air5-bath.chk chem_rb/air5-bath.chk && \
         awk -F, 'NR == 1 { ok = $5 == \"reactions\" } NR > 1 { sum += $5 } END { exit !(ok && sum > 0) }' \
           chem_ra/air5-bath-stats.csv")
set_tests_properties(cli_kedr_dsmc_chem_restart PROPERTIES ENVIRONMENT "OMP_NUM_THREADS=1")
if(KEDR_HAVE_MPI)
  set(chem_np2 "${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 --oversubscribe $<TARGET_FILE:kedr_cli> dsmc ${chem_case} --backend cpu")
  add_test(NAME mpi_kedr_dsmc_chem_np2 COMMAND bash -c "rm -rf mpi_chem_a mpi_chem_b mpi_chem_c && \
           ${chem_np2} --steps 60 --out mpi_chem_a >/dev/null && \
           ${chem_np2} --steps 30 --out mpi_chem_b >/dev/null && \
           ${chem_np2} --steps 60 --out mpi_chem_b --restart mpi_chem_b/air5-bath.chk >/dev/null && \
           cmp mpi_chem_a/air5-bath.rank0of2.chk mpi_chem_b/air5-bath.rank0of2.chk && \
           cmp mpi_chem_a/air5-bath.rank1of2.chk mpi_chem_b/air5-bath.rank1of2.chk && \
           ${chem_one} --steps 70 --out mpi_chem_c --restart mpi_chem_b/air5-bath.rank0of2.chk \
             > mpi_chem_c.log && grep -q 'over 2 ranks onto 1' mpi_chem_c.log")
  set_tests_properties(mpi_kedr_dsmc_chem_np2 PROPERTIES LABELS mpi PROCESSORS 2
    ENVIRONMENT "OMP_NUM_THREADS=1;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
endif()
