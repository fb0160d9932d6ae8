# kedr dsmc with a body of type outline (docs/dsmc.md, "Bodies from outline files"): the wedge
# of cases/dsmc/wedge-outline.ini (a SPARTA 2D surface file) on the cpu, 60 steps straight and
# 30 then a restart to 60, bit for bit (checkpoint and surface file); the checkpoint refused by
# the same case whose outline file moved one point by a nanometre (the case hash covers the
# outline's points).
set(outline_dir ${CMAKE_SOURCE_DIR}/cases/dsmc)
set(outline_one "$<TARGET_FILE:kedr_cli> dsmc ${outline_dir}/wedge-outline.ini --backend cpu --sample-start 20")
add_test(NAME cli_kedr_dsmc_outline_restart COMMAND bash -c "rm -rf ol_a ol_b ol_c && \
         ${outline_one} --steps 60 --out ol_a >/dev/null && \
         ${outline_one} --steps 30 --out ol_b >/dev/null && \
         ${outline_one} --steps 60 --out ol_b --restart ol_b/wedge-outline.chk >/dev/null && \
         cmp ol_a/wedge-outline.chk ol_b/wedge-outline.chk && \
         cmp ol_a/wedge-outline-surface.csv ol_b/wedge-outline-surface.csv && \
         mkdir ol_c && cp ${outline_dir}/wedge-outline.ini ${outline_dir}/species.ini ol_c/ && \
         sed 's/^31 0.10000000000000001 0/31 0.100000001 0/' ${outline_dir}/wedge.surf > ol_c/wedge.surf && \
         ! cmp -s ${outline_dir}/wedge.surf ol_c/wedge.surf && \
         ! $<TARGET_FILE:kedr_cli> dsmc ol_c/wedge-outline.ini --backend cpu --sample-start 20 \
           --steps 60 --out ol_c --restart ol_b/wedge-outline.chk > ol_c.log 2>&1 && \
         grep -q 'written for another case' ol_c.log")
set_tests_properties(cli_kedr_dsmc_outline_restart PROPERTIES ENVIRONMENT "OMP_NUM_THREADS=1")
