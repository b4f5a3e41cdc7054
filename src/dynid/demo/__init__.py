"""``dynid demo`` without ROS: what it runs (:mod:`dynid.demo.plan`) and what it reports
(:mod:`dynid.demo.summary`). The run itself, over DDS, is :mod:`dynid.suite.demo`."""
