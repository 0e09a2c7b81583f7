"""Documents with positions, the embedded-schema locator, the site crawler, the cache."""
