// Header-only target: LLVMFuzzerRunDriver comes from libclang_rt.fuzzer.
#include "cfuzzer_driver.h"
