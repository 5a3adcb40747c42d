// SwiftPM needs one source file per C target; everything lives in the header as static inline.
#include "cncursesw_shim.h"
