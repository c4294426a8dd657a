def f(x):
    if x > 10:
        size = 3
    elif x > 5:
        size = 2
    else:
        size = 1
    return size
