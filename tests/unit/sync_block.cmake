# SyncBlock contract: a synthetic sync table laid out per the real .NET 11.0.0 descriptor (fixture).
add_unit_test(sync_block ${CMAKE_SOURCE_DIR}/tests/fixtures/net11.0.0-linux-x64-descriptor.json)
