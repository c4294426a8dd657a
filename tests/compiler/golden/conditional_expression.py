def f(x):
    return x * 2 if x > 0 else -x
