# A thread's physical frames (async/thread_stack.h) over a backend with fixed frames.
add_unit_test(thread_stack ${CMAKE_SOURCE_DIR}/tests/fixtures/net11.0.0-linux-x64-descriptor.json)
