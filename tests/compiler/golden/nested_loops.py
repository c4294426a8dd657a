def f(n):
    total = 0
    for i in range(n):
        j = 0
        while j < i:
            if j == 3:
                break
            total += j
            j += 1
    return total
