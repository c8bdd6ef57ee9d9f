"""`python -m gateway.sim`: the simulated engine on a port."""

from gateway.sim.cli import main

main()
