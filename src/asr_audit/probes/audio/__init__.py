"""Audio probes: they read clips, run backends on transformed audio and cache through the store.

masked-entity recovery (`masked`, spans chosen by `targets`), audio lift (`lift`), continuation
(`continuation`).
"""
