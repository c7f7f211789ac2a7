@decorator(arg)
def f(a, /, b: int = 1, *args, c, d=2, **kw) -> None:
    """Doc."""
    for i, (j, k) in enumerate(pairs):
        if i < j <= k and not done:
            total += i ** -2
        elif i in seen:
            continue
        else:
            break
    else:
        pass
    with open(p) as fh, lock:
        data = [c for c in fh.read() if c.isalpha()]
    try:
        x = a[1:2, ::3][:, None]
    except (KeyError, IndexError) as e:
        raise ValueError() from e
    finally:
        del x
    return (y := data)


class C(Base, metaclass=Meta):
    attr: int = 0
