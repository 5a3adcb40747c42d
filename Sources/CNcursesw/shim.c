#include "include/cncursesw_shim.h"
