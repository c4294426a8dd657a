def f(n):
    i = 0
    while i < n:
        if i * i > 50:
            return i
        i += 1
    return -1
