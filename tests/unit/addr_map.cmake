# The address-keyed hash table shared by the heap walk, ps and the caches (dac/base/addr_map.c).
add_unit_test(addr_map)
