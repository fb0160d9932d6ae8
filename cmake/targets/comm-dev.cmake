# Registered buffers between ranks (kedr_comm_dev_*, include/kedr/comm.h): tests/unit/
# test_comm_dev.c runs alone as a unit test and here under mpirun on 2 to 4 ranks (the cpu back
# end through MPI; with a GPU also cuda, GPU to GPU between the ranks of a host where it can,
# and through the host with KEDR_COMM_IPC=0).
if(KEDR_HAVE_MPI)
  foreach(np 2 3 4)
    add_test(NAME mpi_test_comm_dev_np${np} COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG}
             ${np} --oversubscribe ${MPIEXEC_PREFLAGS} $<TARGET_FILE:test_comm_dev>
             ${MPIEXEC_POSTFLAGS})
    set_tests_properties(mpi_test_comm_dev_np${np} PROPERTIES LABELS mpi PROCESSORS 2
      ENVIRONMENT "OMP_NUM_THREADS=1;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
  endforeach()
endif()
