"""Running programs: the one runner (runner), the keeper every program runs under (keeper, started by contain) and
what each command cost (costs)."""
