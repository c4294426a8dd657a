def f(n):
    i, total = 0, 0
    get = lambda: i
    while i < n:
        total += get()
        i += 1
    return total
