"""Plain-Python statistics: percentiles with order-statistic CIs, Wilson intervals, bootstrap, CUSUM."""
