"""The trigger battery: one probe over a grid of audio conditions (`battery`, condition grammar in
`conditions`) and the opening-courtesy case study (`courtesy`).
"""
