def f(n):
    i, odd_sum = 0, 0
    while i < n:
        i += 1
        if i % 2 == 0:
            continue
        odd_sum += i
    return odd_sum
