// A planted arrow running up (tests/codegen/check_include_arrows.sh must refuse it).
#include "codegen/compiler.h"
