# Prints the first cycle at which the signal named `signal` leaves 0 in an accelsim VCD (whose
# timescale is 1 ns = 1 cycle). Usage: awk -v signal=pe_r7_c0_psum -f first_change.awk mxu.vcd
$1 == "$var" && $5 == signal { id = $4 }
/^#/ { time = substr($1, 2) }
id != "" && $2 == id && $1 != "r0" && $1 != "b0" { print signal " first leaves 0 at cycle " time; exit }
