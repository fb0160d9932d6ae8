# kedr cayley over several ranks (docs/cayley.md, "Over MPI ranks"): the command under mpirun
# on the cpu against one rank, restarted from its per-rank checkpoints, refused on more ranks
# than the group splits into and below a rank's memory, and the dry run at B_18's size. The
# library's side is tests/mpi/test_cayley_ranks.c.
if(KEDR_HAVE_MPI)
  set(cay_mpirun "${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG}")
  set(cay_kedr "$<TARGET_FILE:kedr_cli> cayley")
  # The JSON of a run less what differs between runs and rank counts (time, memory, ranks).
  set(cay_strip "grep -v -e '\"seconds\"' -e '\"memory_bytes\"' -e '\"ranks\"'")
  # 2 and 3 ranks against one: the same JSON (growth, diameter, average distance, ...) and the
  # same CSV, on a Burnside quotient with inverses and on pancake:8 with small batches.
  add_test(NAME mpi_kedr_cayley_np2 COMMAND bash -c "rm -rf mpi_cay && mkdir mpi_cay && cd mpi_cay && \
           ${cay_kedr} burnside:8 --inverses --backend cpu -q --json b1.json --csv b1.csv > b1.log && \
           ${cay_mpirun} 2 --oversubscribe ${cay_kedr} burnside:8 --inverses --backend cpu -q \
             --json b2.json --csv b2.csv > b2.log && \
           grep -q '2 MPI ranks' b2.log && grep -q '\"ranks\": 2' b2.json && \
           diff <(${cay_strip} b1.json) <(${cay_strip} b2.json) && cmp b1.csv b2.csv && \
           ${cay_kedr} pancake:8 --backend cpu -q --json p1.json > /dev/null && \
           ${cay_mpirun} 3 --oversubscribe ${cay_kedr} pancake:8 --backend cpu -q --batch 1 \
             --json p3.json > /dev/null && \
           diff <(${cay_strip} p1.json) <(${cay_strip} p3.json)")
  # 2 ranks stopped after level 9 with checkpoints, resumed to the end: the straight run's JSON
  # (but the edge visits, which count the resumed run's own); the same files taken up by 3 ranks
  # and by one, and one process's checkpoint by 2 ranks; with one of the files gone, refused
  # naming it.
  set(cay_run2 "${cay_mpirun} 2 --oversubscribe ${cay_kedr} burnside:7 --backend cpu -q")
  add_test(NAME mpi_kedr_cayley_restart_np2 COMMAND bash -c "rm -rf mpi_cayr && mkdir mpi_cayr && cd mpi_cayr && \
           ${cay_run2} --json a.json > /dev/null && \
           ${cay_run2} --max-levels 9 --checkpoint b.chk > /dev/null && \
           test -s b.rank0of2.chk && test -s b.rank1of2.chk && test ! -e b.chk && \
           ${cay_run2} --resume b.chk --json b.json > b.log && grep -q 'resumed            from level 9' b.log && \
           diff <(${cay_strip} a.json | grep -v -e resumed_from -e edge_visits) <(${cay_strip} b.json | grep -v -e resumed_from -e edge_visits) && \
           ${cay_mpirun} 3 --oversubscribe ${cay_kedr} burnside:7 --backend cpu -q --resume b.chk --json c.json > /dev/null && \
           diff <(${cay_strip} b.json) <(${cay_strip} c.json) && \
           ${cay_mpirun} 1 ${cay_kedr} burnside:7 --backend cpu -q --resume b.chk --json d.json > /dev/null && \
           diff <(${cay_strip} a.json | grep -v -e resumed_from -e edge_visits) <(${cay_strip} d.json | grep -v -e resumed_from -e edge_visits) && \
           ${cay_kedr} burnside:7 --backend cpu -q --max-levels 9 --checkpoint d.chk > /dev/null && \
           ${cay_run2} --resume d.chk --json f.json > /dev/null && \
           diff <(${cay_strip} b.json) <(${cay_strip} f.json) && \
           rm b.rank1of2.chk && \
           ! ${cay_mpirun} 3 --oversubscribe ${cay_kedr} burnside:7 --backend cpu -q --resume b.chk 2> e.err && \
           grep -q 'b.rank1of2.chk' e.err")
  # 3 ranks for a group of two blocks: refused, saying 2 is the most; a memory limit below a
  # rank's need: refused with the bytes a rank needs; the dry run of B_18 over 8 ranks (no
  # allocation) with its split, memory a rank and checks; pancake:15's over 4 with the batches
  # sized by an H100's 78 GiB (it fits on 4) and with --batch (no default batches printed);
  # --word under mpirun refused.
  add_test(NAME mpi_kedr_cayley_refused COMMAND bash -c "\
           ! ${cay_mpirun} 3 --oversubscribe ${cay_kedr} abelian:7,11,13 --backend cpu 2> mpi_cay_many.err && \
           grep -q 'at most 2 slices' mpi_cay_many.err && \
           ! ${cay_mpirun} 2 --oversubscribe ${cay_kedr} pancake:9 --backend cpu --memory-limit 64K 2> mpi_cay_mem.err && \
           grep -q 'pancake:9 over 2 ranks needs .* a rank' mpi_cay_mem.err && \
           ! ${cay_mpirun} 2 --oversubscribe ${cay_kedr} pancake:6 --backend cpu --word rank:5 2> mpi_cay_word.err && \
           grep -q 'runs on one rank' mpi_cay_word.err && \
           ${cay_kedr} burnside:18 --dry-run --ranks 8 > mpi_cay_dry.log && \
           grep -q 'order              3814697265625' mpi_cay_dry.log && \
           grep -q '     7        3337860107264        3814697265624         476837158361' mpi_cay_dry.log && \
           grep -q 'codes 119 GB' mpi_cay_dry.log && grep -q '^checked ' mpi_cay_dry.log && \
           grep -q '^default batches ' mpi_cay_dry.log && \
           ${cay_kedr} pancake:15 --dry-run --ranks 4 > mpi_cay_dry15.log && \
           grep -q 'on a GPU of 78 GiB  83.8 GB: 20965521 products a batch, batches 943 MB, 82.7 GB of GPU memory a rank$' mpi_cay_dry15.log && \
           grep -q '^fits               on 4 GPUs of an H100' mpi_cay_dry15.log && \
           ${cay_kedr} pancake:15 --dry-run --ranks 4 --batch 256M > mpi_cay_dry15b.log && \
           grep -q 'products for one rank (--batch)' mpi_cay_dry15b.log && \
           ! grep -q '^default batches' mpi_cay_dry15b.log && \
           ${cay_mpirun} 2 --oversubscribe ${cay_kedr} burnside:17 --dry-run > mpi_cay_dry2.log && \
           grep -q 'ranks              2: slices of' mpi_cay_dry2.log")
  set_tests_properties(mpi_kedr_cayley_np2 mpi_kedr_cayley_restart_np2 mpi_kedr_cayley_refused
    PROPERTIES LABELS mpi PROCESSORS 2
    ENVIRONMENT "OMP_NUM_THREADS=1;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
endif()
