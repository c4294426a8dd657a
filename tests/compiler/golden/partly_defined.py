def f(x):
    if x > 0:
        y = x + 1
    return y
