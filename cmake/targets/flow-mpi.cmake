# kedr flow over ranks on the cpu (docs/flow.md "Several ranks"): the lid-driven cavity over 2
# ranks gives the one-rank fields (CSV: within 1e-9, the last printed digit may differ); 10 steps, then a restart to 20
# from the ranks' checkpoints, is the straight run of 20 bit for bit; the 32 x 32 cavity with the
# approximate inverse preconditioner over 2 ranks gives the one-rank fields (within 1e-9) and
# iterations.
if(KEDR_HAVE_MPI)
  set(flow_case ${CMAKE_SOURCE_DIR}/cases/flow/cavity_ranks.ini)
  set(flow_np2 "${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 --oversubscribe $<TARGET_FILE:kedr_cli> flow")
  set(flow_one "$<TARGET_FILE:kedr_cli> flow ${flow_case} --backend cpu --steps 20")
  add_test(NAME mpi_kedr_flow_np2 COMMAND bash -c "rm -rf mpi_flow1 mpi_flow2 mpi_flowr && \
           ${flow_one} --out mpi_flow1 >/dev/null && \
           ${flow_np2} ${flow_case} --backend cpu --steps 20 --out mpi_flow2 | grep -q '2 ranks: slabs along y' && \
           paste -d, mpi_flow1/cavity_ranks.csv mpi_flow2/cavity_ranks.csv | awk -F, \
             'NR > 1 { for (i = 1; i <= 6; i++) { d = $i - $(i + 6); if (d < 0) d = -d; if (d > m) m = d } } \
              END { exit !(NR == 1025 && m < 1e-9) }' && \
           test -s mpi_flow2/cavity_ranks.rank0of2.chk && test -s mpi_flow2/cavity_ranks.rank1of2.chk && \
           test -s mpi_flow2/cavity_ranks-profiles.csv && \
           ${flow_np2} ${flow_case} --backend cpu --steps 10 --out mpi_flowr >/dev/null && \
           ${flow_np2} ${flow_case} --backend cpu --steps 20 --out mpi_flowr \
             --restart mpi_flowr/cavity_ranks.chk | grep -q 'restart from' && \
           cmp mpi_flow2/cavity_ranks.rank0of2.chk mpi_flowr/cavity_ranks.rank0of2.chk && \
           cmp mpi_flow2/cavity_ranks.rank1of2.chk mpi_flowr/cavity_ranks.rank1of2.chk && \
           sed 's/preconditioner = mg/preconditioner = ainv/' ${CMAKE_SOURCE_DIR}/cases/flow/cavity_re100.ini \
             >mpi_flow_ainv.ini && \
           rm -rf mpi_flow3 mpi_flow4 && \
           $<TARGET_FILE:kedr_cli> flow mpi_flow_ainv.ini --backend cpu --steps 5 --out mpi_flow3 \
             | grep 'iterations a step' | sed 's/.*solve //' >mpi_flow3.it && \
           ${flow_np2} mpi_flow_ainv.ini --backend cpu --steps 5 --out mpi_flow4 \
             | grep 'iterations a step' | sed 's/.*solve //' >mpi_flow4.it && \
           test -s mpi_flow3.it && cmp mpi_flow3.it mpi_flow4.it && \
           paste -d, mpi_flow3/mpi_flow_ainv.csv mpi_flow4/mpi_flow_ainv.csv | awk -F, \
             'NR > 1 { for (i = 1; i <= 6; i++) { d = $i - $(i + 6); if (d < 0) d = -d; if (d > m) m = d } } \
              END { exit !(NR == 1025 && m < 1e-9) }'")
  set_tests_properties(mpi_kedr_flow_np2 PROPERTIES LABELS mpi PROCESSORS 2
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMP_NUM_THREADS=1")
endif()

# An immersed body over 2 ranks: a circle oscillating across the slabs' border; its force
# history (written by rank 0) is the one-rank run's within 2e-7 relative (the force is
# (U_b - L u~) / dt, and each rank count's pressure solve leaves u~ anywhere within its
# tolerance, 1e-9; measured 1.1e-7 with the force systems on the bodies' box, 6.8e-8 with
# KEDR_FLOW_IBM_BOX=0).
if(KEDR_HAVE_MPI)
  set(flow_body ${CMAKE_SOURCE_DIR}/cases/flow/cavity_circle_ranks.ini)
  add_test(NAME mpi_kedr_flow_body_np2 COMMAND bash -c "rm -rf mpi_flowb1 mpi_flowb2 && \
           $<TARGET_FILE:kedr_cli> flow ${flow_body} --backend cpu --steps 10 --out mpi_flowb1 >/dev/null && \
           ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 --oversubscribe $<TARGET_FILE:kedr_cli> flow \
             ${flow_body} --backend cpu --steps 10 --out mpi_flowb2 >/dev/null && \
           paste -d, mpi_flowb1/cavity_circle_ranks-circle.csv mpi_flowb2/cavity_circle_ranks-circle.csv | \
             awk -F, 'NR > 1 { for (i = 1; i <= 11; i++) { a = $i < 0 ? -$i : $i; d = $i - $(i + 11); \
               if (d < 0) d = -d; if (d > 2e-7 * (a > 1 ? a : 1)) bad++ } } \
               END { exit !(NR == 11 && bad == 0) }'")
  set_tests_properties(mpi_kedr_flow_body_np2 PROPERTIES LABELS mpi PROCESSORS 2
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMP_NUM_THREADS=1")
endif()

# Multigrid over 2 ranks (src/flow/mg_ranks.c): the Re 100 cavity (PCG + V-cycle, its case
# file as it is) for 40 steps gives the one-rank CSV within 1e-9 and the same pressure
# iterations a step; 20 steps and a restart to 40 on 2 ranks are the straight 40 bit for bit
# (both ranks' checkpoints); then V-cycles alone with the split levels as deep as they go
# (KEDR_FLOW_MG_GATHER=0) on 2 ranks, the same again.
if(KEDR_HAVE_MPI)
  set(flow_mg_case ${CMAKE_SOURCE_DIR}/cases/flow/cavity_re100.ini)
  set(flow_mg_np2 "${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 --oversubscribe $<TARGET_FILE:kedr_cli> flow")
  set(flow_mg_cmp "awk -F, 'NR > 1 { for (i = 1; i <= 6; i++) { d = $i - $(i + 6); if (d < 0) d = -d; if (d > m) m = d } } END { exit !(NR == 1025 && m < 1e-9) }'")
  add_test(NAME mpi_kedr_flow_mg_np2 COMMAND bash -c "rm -rf mpi_flowm1 mpi_flowm2 mpi_flowm3 mpi_flowm4 mpi_flowm5 && \
           $<TARGET_FILE:kedr_cli> flow ${flow_mg_case} --backend cpu --steps 40 --out mpi_flowm1 >mpi_flowm1.txt && \
           ${flow_mg_np2} ${flow_mg_case} --backend cpu --steps 40 --out mpi_flowm2 >mpi_flowm2.txt && \
           grep -q '2 ranks: slabs along y.*PCG + mg' mpi_flowm2.txt && \
           paste -d, mpi_flowm1/cavity_re100.csv mpi_flowm2/cavity_re100.csv | ${flow_mg_cmp} && \
           test \"$(grep -o '[0-9.]* iterations a step' mpi_flowm1.txt)\" = \"$(grep -o '[0-9.]* iterations a step' mpi_flowm2.txt)\" && \
           ${flow_mg_np2} ${flow_mg_case} --backend cpu --steps 20 --out mpi_flowm5 >/dev/null && \
           ${flow_mg_np2} ${flow_mg_case} --backend cpu --steps 40 --out mpi_flowm5 \
             --restart mpi_flowm5/cavity_re100.chk | grep -q 'restart from' && \
           cmp mpi_flowm2/cavity_re100.rank0of2.chk mpi_flowm5/cavity_re100.rank0of2.chk && \
           cmp mpi_flowm2/cavity_re100.rank1of2.chk mpi_flowm5/cavity_re100.rank1of2.chk && \
           sed -e 's/^solver = pcg/solver = mg/' -e '/^preconditioner/d' ${flow_mg_case} >mpi_flow_mg.ini && \
           $<TARGET_FILE:kedr_cli> flow mpi_flow_mg.ini --backend cpu --steps 40 --out mpi_flowm3 >mpi_flowm3.txt && \
           KEDR_FLOW_MG_GATHER=0 ${flow_mg_np2} mpi_flow_mg.ini --backend cpu --steps 40 --out mpi_flowm4 >mpi_flowm4.txt && \
           grep -q '2 ranks: slabs along y.*pressure: multigrid' mpi_flowm4.txt && \
           paste -d, mpi_flowm3/mpi_flow_mg.csv mpi_flowm4/mpi_flow_mg.csv | ${flow_mg_cmp} && \
           test \"$(grep -o '[0-9.]* iterations a step' mpi_flowm3.txt)\" = \"$(grep -o '[0-9.]* iterations a step' mpi_flowm4.txt)\"")
  set_tests_properties(mpi_kedr_flow_mg_np2 PROPERTIES LABELS mpi PROCESSORS 2
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMP_NUM_THREADS=1")
endif()
