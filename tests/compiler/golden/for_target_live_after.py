def f(xs):
    last = -1
    for x in xs:
        pass
    return x
