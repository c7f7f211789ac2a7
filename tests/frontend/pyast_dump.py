"""Dump a Python file's CPython AST in the form tad::ast::dump() writes.

Usage: pyast_dump.py [--no-locations] FILE

The tree is ast.parse() of the file's bytes. One node per line: a node is its class name, followed
by " @line:col-end_line:end_col" when it has a location; its fields (in _fields order) follow on
their own lines, indented two spaces deeper, as "name: value". A list is "name: []" or "name:"
followed by one "- item" line per element. Scalars: None, True, False, ..., ints in decimal, floats
as repr(), imaginary numbers as repr(imag) + "j", strings as JSON with ASCII escapes, bytes as
b"<hex>". Exit status 2 (message on stderr) when CPython rejects the file, 3 when the interpreter
is not CPython 3.11 (whose ast the dump mirrors).
"""
import ast
import json
import sys


def scalar(value):
    if value is None:
        return "None"
    if value is Ellipsis:
        return "..."
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, complex):
        return repr(value.imag) + "j"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bytes):
        return 'b"' + value.hex() + '"'
    raise TypeError("unexpected field value %r" % (value,))


def header(node, with_locations):
    text = type(node).__name__
    if with_locations and "lineno" in node._attributes:
        text += " @%d:%d-%d:%d" % (node.lineno, node.col_offset, node.end_lineno,
                                   node.end_col_offset)
    return text


def dump(tree, with_locations):
    lines = []

    def put(prefix, value, indent):
        pad = " " * indent
        if isinstance(value, ast.AST):
            lines.append(pad + prefix + header(value, with_locations))
            for name in value._fields:
                put(name + ": ", getattr(value, name, None), indent + 2)
        elif isinstance(value, list):
            if not value:
                lines.append(pad + prefix + "[]")
                return
            lines.append(pad + prefix.rstrip())
            for item in value:
                put("- ", item, indent + 2)
        else:
            lines.append(pad + prefix + scalar(value))

    put("", tree, 0)
    return "\n".join(lines) + "\n"


def main(argv):
    args = argv[1:]
    with_locations = True
    if args and args[0] == "--no-locations":
        with_locations = False
        args = args[1:]
    if len(args) != 1:
        sys.stderr.write("usage: pyast_dump.py [--no-locations] FILE\n")
        return 2
    if sys.version_info[:2] != (3, 11):
        sys.stderr.write("pyast_dump.py needs Python 3.11, not %d.%d\n" % sys.version_info[:2])
        return 3
    with open(args[0], "rb") as f:
        data = f.read()
    try:
        tree = ast.parse(data, args[0])
    except (SyntaxError, ValueError) as e:
        sys.stderr.write("%s: %s\n" % (type(e).__name__, e))
        return 2
    sys.stdout.write(dump(tree, with_locations))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
