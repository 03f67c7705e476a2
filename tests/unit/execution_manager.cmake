# ExecutionManager and PrecodeStubs: synthetic structures laid out per the real .NET 11.0.0 descriptor.
add_unit_test(execution_manager ${CMAKE_SOURCE_DIR}/tests/fixtures/net11.0.0-linux-x64-descriptor.json)
add_unit_test(precode ${CMAKE_SOURCE_DIR}/tests/fixtures/net11.0.0-linux-x64-descriptor.json)
