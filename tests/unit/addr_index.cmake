# The index over records sorted by address: the heap pass's continuations and tasks, gcroot's
# objects (dac/base/addr_index.c).
add_unit_test(addr_index)
