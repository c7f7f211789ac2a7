"""triton.tools for the tad stand-in: only the host-side tensor descriptor."""
