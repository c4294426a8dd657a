def f(x):
    if x > 0:
        y = x
    else:
        y = -x
    return y
