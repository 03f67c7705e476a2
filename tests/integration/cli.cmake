# CLI and standalone data-target integration tests (included by tests/CMakeLists.txt).

# adac-probe drives a backend directly (adac_probe.c); the tests find it in bin/.
add_executable(adac-probe ${CMAKE_CURRENT_SOURCE_DIR}/integration/adac_probe.c)
target_link_libraries(adac-probe PRIVATE asyncdac)
adac_strict(adac-probe)

# A debuggee whose threads come and go, for attaching while threads are created. Not sanitized,
# like the programs in targets/.
find_package(Threads REQUIRED)
add_executable(thread-churn ${CMAKE_CURRENT_SOURCE_DIR}/integration/thread_churn.c)
target_link_libraries(thread-churn PRIVATE Threads::Threads)
target_compile_options(thread-churn PRIVATE -Wall -Wextra -Werror -g -O0)

add_adac_test(cli.runtime_pid integration/cli_runtime_pid.py)
add_adac_test(cli.runtime_core integration/cli_runtime_core.py)
add_adac_test(cli.bad_input integration/cli_bad_input.py)
add_adac_test(cli.core_file_fallback integration/core_file_fallback.py)
add_adac_test(cli.core_crafted integration/core_crafted.py)
add_adac_test(cli.backend_pid integration/backend_pid.py)
add_adac_test(cli.backend_core integration/backend_core.py)
