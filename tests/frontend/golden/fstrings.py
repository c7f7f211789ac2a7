f"{x!r:>{width}} and {y=}"
"plain " f"{{braces}} {z:.2f}"
f"""{
    a}"""
