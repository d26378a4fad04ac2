"""The paper's formal layer: one module per statement, each with a hypothesis property.

Shipped as ``normtest.theorems``; collected by pytest from the repository.
"""
