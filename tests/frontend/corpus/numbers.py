# Numeric literals.
ints = [0, 1, 42, 1_000_000, 0_0, 00, 9223372036854775807, 9223372036854775808,
        123456789012345678901234567890, -9223372036854775808]
hexes = [0x0, 0xff, 0XFF, 0xdead_beef, 0x_1, 0xFFFFFFFFFFFFFFFFFFFF]
octs = [0o0, 0o777, 0O17, 0o_7, 0o1_2]
bins = [0b0, 0b1010, 0B11, 0b_1, 0b1_0_1]
floats = [0.0, 1.0, 1., .5, 0.1, 1e10, 1E10, 1e-10, 1.5e+3, 1_000.000_1, 1e1_0, 3.14159,
          1e16, 1e15, 123456789.123456789, 1e-4, 1e-5, 1e308, 1e309, 1e-400, 0.30000000000000004,
          5e-324, 2.5e-320, 1.7976931348623157e308, 0e0, 0.]
imaginary = [1j, 1J, 0j, 1.5j, 1e3j, 1_0j, .5j, 1.j, 1e-400j]
mixed = 1 + 2j
neg = -1.5
attr = 1 .bit_length()
keyword_after = [1if x else 2, 1or 2, 0x1for x in y]
cond = 1 if x else 0
