# GC heap walk: synthetic heaps laid out per the real .NET 11.0.0 descriptors (main one from the
# fixture, GC sub-descriptors inside the test).
add_unit_test(gc_heap ${CMAKE_SOURCE_DIR}/tests/fixtures/net11.0.0-linux-x64-descriptor.json)
