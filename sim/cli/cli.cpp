#include "sim/cli/cli.h"
namespace accelsim {
int cli_main(int, char*[]) { return 0; }
}  // namespace accelsim
