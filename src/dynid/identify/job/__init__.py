"""The identification as a job: the workflow ``dynid identify`` and identifier_node share, the node's session,
and a refused identification's ways out."""
