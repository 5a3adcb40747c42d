#include "include/clatchkey_sys.h"
