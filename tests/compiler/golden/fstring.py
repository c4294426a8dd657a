def f(x):
    if x > 0:
        assert x < 10, f"x is {x!r:>5}, expected below {10 - 0}"
    return x
