def f(xs, limit):
    total = 0
    for x in xs:
        if total > limit:
            break
        total += x
    return total
