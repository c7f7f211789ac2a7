# Structural pattern matching.
def describe(command, point, value):
    match command:
        case "quit":
            return 0
        case "go" | "move":
            return 1
        case ["go", direction]:
            return direction
        case ["drop", *objects]:
            return objects
        case [first, *_, last]:
            return first, last
        case []:
            return None
        case ():
            return None
        case (x, y):
            return x
        case (x,):
            return x
        case (x):
            return x
        case [*_]:
            return 0
        case _:
            return -1

    match point:
        case Point(x=0, y=0):
            print("origin")
        case Point(x=0, y=y) if y > 0:
            print(y)
        case Point(0, 0):
            pass
        case Point(x, y=1):
            pass
        case Point():
            pass
        case geometry.Point(x=px) as p:
            print(p, px)
        case {"x": 0, "y": y}:
            pass
        case {"x": x, **rest}:
            pass
        case {}:
            pass
        case {1: a, -1: b, 1.5: c, "s": d, None: e, True: f, Color.RED: g,}:
            pass
        case {**rest}:
            pass

    match value:
        case 0 | 1 | 2:
            pass
        case -1:
            pass
        case 1.5 | -2.5:
            pass
        case 1 + 2j | 1 - 2j | -1 + 2j:
            pass
        case 3j:
            pass
        case "a" "b":
            pass
        case b"bytes":
            pass
        case None:
            pass
        case True | False:
            pass
        case Color.RED:
            pass
        case mod.Color.GREEN | mod.Color.BLUE:
            pass
        case [1, 2] | [3, 4] as pair:
            pass
        case (1 | 2) as small:
            pass
        case int() | float():
            pass
        case str() as s if len(s) > 3:
            pass
        case [Point(x=0), *others] if others:
            pass
        case {"k": [1, {"nested": (a, b)}]}:
            pass

    match value, point:
        case a, b:
            pass
        case (a, b), *rest:
            pass
        case *a, b:
            pass

    match (value):
        case x if x:
            pass

    match -value:
        case _: pass

    match [value, point]:
        case [1, *_]: pass
    match value,:
        case (v,): pass
    match *value, point:
        case _:
            pass
