match command.split():
    case [action, *rest] if rest:
        pass
    case Point(x=0, y=y) | {"y": y, **others}:
        pass
    case 1 | -2 | 3 + 4j | "s" | None | Color.RED:
        pass
    case _:
        pass
