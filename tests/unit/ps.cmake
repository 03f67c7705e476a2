# ps (issue 6): chains and stitched stacks built from hand-made heaps (no target needed).
add_unit_test(async_scan)
