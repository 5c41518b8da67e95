#pragma once
// Numbers as kmini prints them in plans, messages and the summary table: the
// one place for number formatting (results.json keeps full precision).
#include <string>

namespace kmini {

// "%.*g": format_g(0.000123456, 3) == "0.000123", format_g(v, 17)
// round-trips a double; "nan", "inf", "-inf" as printf writes them.
std::string format_g(double v, int precision);

// format_g for tables and plans: "-" when not finite.
std::string format_number(double v, int precision = 3);

// A value with 3 significant digits and an SI prefix that keeps the mantissa
// in [1, 1000): format_si(1.33e12, "bitop/s") == "1.33 Tbitop/s",
// format_si(999.9, "") == "1.00 k". "-" when not finite.
std::string format_si(double v, const std::string& unit);

// Bytes with a binary prefix: "512 B", "1.5 KiB", "40 GiB".
std::string format_bytes(double bytes);

}  // namespace kmini
