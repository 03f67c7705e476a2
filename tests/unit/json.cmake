# JSON addresses and printing (base/json.h), and progress through the output sink (base/output.h).
add_unit_test(json)
