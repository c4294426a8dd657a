def f(x, y):
    if x > y:
        y = y + 1
    return y
